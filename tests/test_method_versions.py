"""A method whose behaviour changed has a new version, so its old rows are recomputed, never mixed in."""

import json

import pytest

from extlib.methods import METHODS

from .method_fingerprints import STORE, fingerprint


@pytest.mark.parametrize("name", list(METHODS))
def test_a_method_that_behaves_differently_has_a_new_version(name):
    stored = json.loads(STORE.read_text())[name]
    version = METHODS[name][0].version
    if version == stored["version"]:
        assert fingerprint(name) == stored["sha256"], (
            f"{name} now sends other prompts or answers otherwise than version {version} did: raise "
            f"{METHODS[name][0].__name__}.version and run `.venv/bin/python -m tests.method_fingerprints --update`")
    else:
        assert version > stored["version"], f"{name}: versions only go up"
        pytest.fail(f"{name} is version {version}; record its behaviour with "
                    "`.venv/bin/python -m tests.method_fingerprints --update`")
