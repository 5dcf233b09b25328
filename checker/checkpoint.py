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
complete level (counts and coverage), the SHA-256 digest of every level file, and a seal over all of
that: HMAC-SHA256 keyed with this user's run key, a secret kept outside every run directory
(:func:`run_key_path`: ``$GROUPCHECK_RUN_KEY``, else ``$XDG_STATE_HOME/groupcheck/run-key``, else
``~/.local/state/groupcheck/run-key``; 32 random bytes made with mode 0600 on first use). Before anything
is resumed the seal and every level file's digest are checked, and every mismatch is refused with one
line naming the file. So a resumed run trusts only what a run holding the key wrote: whoever can write
the run directory but cannot read the key cannot forge a level, a count or the coverage, even by
recomputing every SHA-256 — they can only delete or swap whole sealed run directories. A run sealed
with another key (another user, another machine, a replaced key) is refused as such. Resuming also
replays every record (each extra parent record too) from its parent and refuses, naming the level file,
one that does not replay.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
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
    """SHA-256 of a regular file (a FIFO or a device is refused, never read)."""
    h = hashlib.sha256()
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise CheckpointError(f"{path}: not a regular file")
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


RUN_KEY_ENV = "GROUPCHECK_RUN_KEY"  # the path of the run key file, for tests and unusual set-ups
MAX_RUN_FILE = 64 << 20  # bytes: a run record is a few kilobytes; refuse anything near this
_SEAL, _KEY_ID = "seal", "key_id"


def run_key_path() -> Path:
    """Where this user's run key lives: ``$GROUPCHECK_RUN_KEY``, else under ``$XDG_STATE_HOME``, else
    ``~/.local/state/groupcheck/run-key``; never inside a run directory."""
    named = os.environ.get(RUN_KEY_ENV)
    if named:
        return Path(named)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "groupcheck" / "run-key"


def run_key() -> bytes:
    """This user's run key (made on first use, 32 random bytes, mode 0600). Raises
    :class:`CheckpointError` naming the key file when it cannot be made or read, or when others could
    read or write it (then it is no secret)."""
    path = run_key_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot make the run key ({exc.strerror or exc})") from None
    else:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(32) + "\n")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read the run key ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
            raise CheckpointError(f"{path}: the run key must be a small regular file")
        if st.st_mode & 0o077 or st.st_uid != os.getuid():
            raise CheckpointError(f"{path}: the run key must be yours and private (chmod 600)")
        key = f.read(4097).strip()
    if len(key) < 32:
        raise CheckpointError(f"{path}: the run key is too short (remove it to make a new one)")
    return key


def _seal(key: bytes, meta: dict[str, Any]) -> str:
    body = {k: v for k, v in meta.items() if k != _SEAL}
    text = json.dumps(body, sort_keys=True, ensure_ascii=True).encode()
    return hmac.new(key, text, hashlib.sha256).hexdigest()


def _key_id(key: bytes) -> str:
    """Names the key without revealing it: which key sealed a run (another user's, another machine's)."""
    return hmac.new(key, b"groupcheck run key id", hashlib.sha256).hexdigest()[:16]


def write_sealed(directory: Path, meta: dict[str, Any]) -> None:
    """Write ``run.json`` sealed with the run key, atomically (a kill leaves the previous complete level)."""
    key = run_key()
    body = {**meta, _KEY_ID: _key_id(key)}
    sealed = {**body, _SEAL: _seal(key, body)}
    tmp = directory / (RUN_FILE + ".tmp")
    tmp.write_text(json.dumps(sealed, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, directory / RUN_FILE)


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (never a FIFO, a device
    or a link to one: they are not opened for reading at all). Raises ``OSError`` naming the file, or
    :class:`CheckpointError` for a special or oversized file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise CheckpointError(f"{path}: not a regular file")
        if st.st_size > limit:
            raise CheckpointError(f"{path}: larger than {limit:,} bytes")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise CheckpointError(f"{path}: larger than {limit:,} bytes")
    return data


def read_sealed(directory: Path) -> dict[str, Any]:
    """``run.json``, its seal checked against the run key."""
    path = directory / RUN_FILE
    try:
        meta = json.loads(read_regular(path, MAX_RUN_FILE).decode("utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no run recorded here") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{path}: not a run record ({type(exc).__name__})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: not a run record")
    if not isinstance(meta.get(_SEAL), str):
        raise CheckpointError(f"{path}: not sealed with a run key (an older groupcheck's run?): run it again")
    key = run_key()
    if meta.get(_KEY_ID) != _key_id(key):
        raise CheckpointError(
            f"{path}: sealed with another run key than {run_key_path()} (another user's or machine's run, "
            "or a forged one): not trusted"
        )
    if not hmac.compare_digest(meta[_SEAL], _seal(key, meta)):
        raise CheckpointError(f"{path}: its seal does not match its contents (edited or damaged)")
    return meta


# settings an engine records only when on (a run recorded before they existed keeps its identity): a run
# that has one must be resumed with it, and one without it without it
OPTIONAL_SETTINGS = ("reduce",)


def reduce_identity(reduce: bool) -> dict[str, Any]:
    """What a run's identity says of ``--reduce``: ``reduce = True`` when on, nothing when off (so a run
    recorded before the reduction existed keeps its identity; :func:`check_identity` reads the absence)."""
    return {"reduce": True} if reduce else {}


def check_identity(directory: Path, meta: dict[str, Any], identity: dict[str, Any]) -> None:
    for key in (*identity, *(k for k in OPTIONAL_SETTINGS if k not in identity)):
        want = identity.get(key)
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
            if not isinstance(entry, dict):
                raise CheckpointError(f"{self.dir / RUN_FILE}: level {d} is not described properly")
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
            raw = read_regular(path, entry["records"] * _RECORD)
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
