"""The errors a person can act on, apart from bugs. Every entry point (the CLI, `make`, the notebooks) prints one of
these as one clear line; any other exception is a bug and shows its traceback."""

from __future__ import annotations


class UserError(ValueError):
    """Input the user can fix (a setting, a parameter, a file, a preset); the message says what and how."""


class MissingFile(UserError, FileNotFoundError):
    """A file the user named (a document, an ids file, a tokenizer, a dataset file) is not there. Still a
    FileNotFoundError, the type `open` raises, so callers that catch missing files go on catching it."""


class SetupError(RuntimeError):
    """The machine, not the input: a download, a hash, a server that would not start; the message says what to do."""


class ModelCallRefused(RuntimeError):
    """A model call (or a model server) asked for where none may happen: drawing committed rows, or with
    EXTAGENTS_OFFLINE=1 set. Computing is always an explicit command; the message names it."""


class RunFileBusy(UserError):
    """A run file another process is writing; the message names that process."""
