"""The conformance harness: building the Maven project in ``conformance/`` into a cache, and the Java
process that drives Kafka's group coordinator, one JSON step per line."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent.parent / "conformance"
MAIN_CLASS = "groupcheck.conformance.Main"


class HarnessUnavailable(RuntimeError):
    """Java or Maven is missing, or the harness does not build or start; the message says what to do."""


def kafka_version() -> str:
    """The Kafka version the harness is built against: ``conformance/pom.xml``'s ``kafka.version``."""
    text = (PROJECT / "pom.xml").read_text(encoding="utf-8")
    found = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", text)
    if found is None:
        raise HarnessUnavailable(f"{PROJECT / 'pom.xml'}: no <kafka.version> property")
    return found.group(1).strip()


# ------------------------------------------------------------------------------------------- building


def cache_root() -> Path:
    """Where built harnesses live: ``$GROUPCHECK_CACHE``, else ``$XDG_CACHE_HOME/groupcheck``, else
    ``~/.cache/groupcheck``."""
    if os.environ.get("GROUPCHECK_CACHE"):
        return Path(os.environ["GROUPCHECK_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groupcheck"


def _sources() -> list[Path]:
    return [PROJECT / "pom.xml", *sorted((PROJECT / "src").rglob("*.java"))]


def _digest() -> str:
    h = hashlib.sha256()
    for p in _sources():
        h.update(str(p.relative_to(PROJECT)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def missing_tools() -> list[str]:
    """What of Java (java, javac) and Maven (mvn) is not on PATH."""
    return [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]


def harness_classpath(progress: Callable[[str], None] | None = None) -> str:
    """The classpath of the built harness, building it first if this version of ``conformance/`` has not
    been built yet (into ``cache_root()/conformance/<digest of the sources>``, so the repository stays
    clean; Maven's own downloads go to its local repository, ``~/.m2``, which CI keeps)."""
    home = cache_root() / "conformance" / f"kafka-{kafka_version()}-{_digest()}"
    if not (home / "built").exists():
        missing = missing_tools()
        if missing:
            raise HarnessUnavailable(
                f"the conformance harness needs {', '.join(missing)} on PATH "
                "(Debian: apt-get install openjdk-17-jdk-headless maven)"
            )
        _build(home, progress)
    return os.pathsep.join([str(home / "target" / "classes"), str(home / "target" / "lib" / "*")])


def _build(home: Path, progress: Callable[[str], None] | None) -> None:
    home.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=home.name + ".", dir=home.parent))
    try:
        shutil.copy2(PROJECT / "pom.xml", work / "pom.xml")
        shutil.copytree(PROJECT / "src", work / "src")
        if progress:
            progress(f"building the conformance harness (Kafka {kafka_version()}) in {home}")
        log = work / "build.log"
        for offline in (True, False):  # offline first: fast, and it works without a network once cached
            cmd = ["mvn", "-q", "-B", *(["-o"] if offline else []), "package"]
            with open(log, "w", encoding="utf-8") as out:
                done = subprocess.run(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT, check=False)
            if done.returncode == 0:
                break
            if progress and offline:
                progress("offline build failed (dependencies not cached yet); building online")
        else:
            tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:])
            raise HarnessUnavailable(f"mvn package failed in {work}:\n{tail}")
        (work / "built").write_text(kafka_version() + "\n", encoding="utf-8")
        try:
            work.rename(home)
        except OSError:
            if not (home / "built").exists():  # another process won the race with a complete build
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


class Harness:
    """The harness process: one JSON step per line in, one result per line out."""

    def __init__(self, classpath: str | None = None) -> None:
        java = shutil.which("java")
        if java is None:
            raise HarnessUnavailable(
                "the conformance harness needs java on PATH (apt-get install openjdk-17-jdk-headless)"
            )
        cp = classpath if classpath is not None else harness_classpath()
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [java, "-XX:+UseSerialGC", "-Xshare:auto", "-cp", cp, MAIN_CLASS, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        hello = self._read()
        self.kafka = str(hello.get("kafka", "?"))

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self._stderr.seek(0)
            err = self._stderr.read().decode("utf-8", "replace")[-2000:]
            raise HarnessUnavailable(f"the conformance harness stopped (exit {self.proc.poll()}): {err}")
        data = json.loads(line)
        assert isinstance(data, dict)
        return data

    def step(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"events": events}, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()
        out = self._read()
        if "harness_error" in out:
            raise HarnessUnavailable(f"harness: {out['harness_error']}")
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
