"""Run directories of the in-process search: each complete level written down, a run resumed from them.

A run directory holds ``run.json`` and one file per complete level, ``level-NNNNN.bin``: the level's parent
links as little-endian uint64 triples (state fingerprint, parent fingerprint, action index) in the order
the search met them — the first record of a fingerprint is the one whose state the search kept, later
ones are other parents in the level before (see :func:`checker.search.bfs`). Nothing else: no state is
ever stored, so nothing is deserialised from the directory. Resuming rebuilds each level's states by
replaying every first record's action from its parent's rebuilt state, and refuses the directory if a
fingerprint does not come out as recorded.

Integrity. ``run.json`` records the run's identity (format, what was explored — the caller's key, e.g.
the scenario table —, symmetry, properties, deadlock checking, depth bound), the figures at the last
complete level, the SHA-256 digest of every level file and a digest over all of that. Before anything
is resumed, every digest is checked and every mismatch refused with one line naming the file: a damaged
or truncated level file, a level file swapped for another, an edited figure. A forger who rewrites a
level file *and* recomputes every digest is still caught when the states do not replay from their
parents, or when a level's count disagrees with its records; figures that cannot be re-derived (states
generated, coverage) are protected by the digest alone.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from groupcheck.checker.errors import CheckerError

RUN_FILE = "run.json"
LOCAL_FORMAT = "groupcheck-local-run/1"
_RECORD = 24  # bytes per parent link: three uint64


class CheckpointError(CheckerError):
    """A run directory cannot be written or resumed (missing, damaged, or a run of something else)."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _body_digest(meta: dict[str, Any]) -> str:
    body = {k: v for k, v in meta.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def write_sealed(directory: Path, meta: dict[str, Any]) -> None:
    """Write ``run.json`` with its digest, atomically (a kill leaves the previous complete level)."""
    sealed = {**meta, "digest": _body_digest(meta)}
    tmp = directory / (RUN_FILE + ".tmp")
    tmp.write_text(json.dumps(sealed, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, directory / RUN_FILE)


def read_sealed(directory: Path) -> dict[str, Any]:
    """``run.json``, its digest checked."""
    path = directory / RUN_FILE
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no run recorded here") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{path}: not a run record ({type(exc).__name__})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("digest"), str):
        raise CheckpointError(f"{path}: not a run record (no digest)")
    if meta["digest"] != _body_digest(meta):
        raise CheckpointError(f"{path}: its digest does not match its contents (edited or damaged)")
    return meta


def check_identity(directory: Path, meta: dict[str, Any], identity: dict[str, Any]) -> None:
    for key, want in identity.items():
        if meta.get(key) != want:
            what = "another scenario" if key == "key" else f"{key} = {meta.get(key)!r}, not {want!r}"
            raise CheckpointError(f"{directory / RUN_FILE}: a run of {what}")


class LocalRun:
    """The run directory of one in-process search (see the module docstring)."""

    def __init__(self, directory: str | Path, identity: dict[str, Any]) -> None:
        self.dir = Path(directory)
        self.identity = {"format": LOCAL_FORMAT, **identity}
        self.meta: dict[str, Any] = {}
        self.written = 0  # parent-link records already in level files

    @staticmethod
    def level_name(depth: int) -> str:
        return f"level-{depth:05d}.bin"

    def start(self) -> None:
        """Begin a run here (refusing a directory that already holds one: resume it, or pick another)."""
        if (self.dir / RUN_FILE).exists():
            raise CheckpointError(f"{self.dir}: already holds a run; resume it or choose an empty directory")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(f"{self.dir}: cannot create the run directory ({exc.strerror})") from None
        self.meta = {**self.identity, "levels": [], "figures": {}}
        write_sealed(self.dir, self.meta)

    def write_level(self, depth: int, fresh: np.ndarray, states: int, figures: dict[str, Any]) -> None:
        """Write the parent links met since the last level (``fresh``) as level ``depth``, with its
        ``states`` new states, and the search's ``figures`` at this point."""
        name = self.level_name(depth)
        tmp = self.dir / (name + ".tmp")
        tmp.write_bytes(fresh.astype("<u8").tobytes())
        os.replace(tmp, self.dir / name)
        self.written += len(fresh)
        entry = {
            "file": name,
            "records": len(fresh),
            "states": states,
            "sha256": sha256_file(self.dir / name),
        }
        self.meta = {**self.meta, "levels": [*self.meta["levels"], entry], "figures": figures}
        write_sealed(self.dir, self.meta)

    def load(self) -> list[np.ndarray]:
        """Verify the run recorded here against this search and every digest; its levels' records."""
        if not self.dir.is_dir():
            raise CheckpointError(f"{self.dir}: no such run directory")
        meta = read_sealed(self.dir)
        check_identity(self.dir, meta, self.identity)
        levels, figures = meta.get("levels"), meta.get("figures")
        if not isinstance(levels, list) or not isinstance(figures, dict):
            raise CheckpointError(f"{self.dir / RUN_FILE}: levels and figures missing")
        out = []
        for d, entry in enumerate(levels, start=1):
            name = self.level_name(d)
            ok = isinstance(entry, dict) and entry.get("file") == name
            ok = ok and all(isinstance(entry.get(k), int) and entry[k] >= 0 for k in ("records", "states"))
            if not ok:
                raise CheckpointError(f"{self.dir / RUN_FILE}: level {d} is not described properly")
            path = self.dir / name
            if not path.is_file():
                raise CheckpointError(f"{path}: missing")
            if sha256_file(path) != entry.get("sha256"):
                raise CheckpointError(
                    f"{path}: its SHA-256 digest is not the one recorded (damaged or replaced)"
                )
            raw = path.read_bytes()
            if len(raw) != entry["records"] * _RECORD:
                raise CheckpointError(f"{path}: expected {entry['records']} records")
            out.append(np.frombuffer(raw, dtype="<u8").reshape(-1, 3).astype(np.uint64))
            self.written += entry["records"]
        self.meta = meta
        return out

    @property
    def figures(self) -> dict[str, Any]:
        return dict(self.meta.get("figures", {}))

    def level_states(self, depth: int) -> int:
        return int(self.meta["levels"][depth - 1]["states"])
