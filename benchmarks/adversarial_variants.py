"""The adversarial pass over --model (issue 29): protocol variants as an attacker or a careless user writes
them, and traces whose ``model`` entry is forged, each run as its own ``groupcheck`` process.

    python benchmarks/adversarial_variants.py [--timeout S]

Each module body below is written after a header that imports groupcheck's actions and looks up ``eager``,
and checked with ``groupcheck check --model MODULE.py:V`` on a small scenario naming ``protocol = "v"``:
modules that raise or exit at import, NAMEs that are not Protocols, malformed tables (actor, over, kind,
fairness, footprint parts, types of every field), handlers and guards that raise, recurse, exit, take the
wrong arguments or return what is not a world (or a world of junk), variants named like built-in
protocols. Then ``--model`` given a FIFO, a folder, a 180 MB file, a non-UTF-8 file, a device, junk
references; a handler that raises under ``--workers 2`` and ``simulate``; and ``replay``/``show``/``render``
of a variant's trace without ``--model``, with another module, with a changed source, with a copy by
another path, and with its ``model`` entry missing, null, of the wrong type, forged (digest, protocol,
module) or huge. Prints one line per case and the counts: tried, refused cleanly (exit 2, one line on
stderr starting ``groupcheck:``), accepted (exit 0 or 1, no traceback), tracebacks, hangs (past the
timeout), data lost (an input changed or removed), other (any other exit). Exit 1 unless the last four
are 0.

Not here, by design: a handler that loops for ever (the user's own infinite loop: Ctrl-C or a second
SIGTERM ends it), and a module whose factory calls os.abort() (its own choice to end the process).
"""

# ruff: noqa: E501 - the module bodies below are one line each, as a user would write them

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "majority_join"

HEADER = """from dataclasses import replace
from groupcheck.model.actions import ActionSpec, Protocol, lookup
eager = lookup("eager")
"""

SCENARIO = """name = "v"
protocol = "v"
[group]
consumers = 3
brokers = 1
topics = { t0 = 3 }
records_per_partition = 0
[faults]
consumer_joins = 1
[check]
properties = ["exclusive-fetch", "single-owner"]
"""

# name -> the module's body after HEADER; the object checked is V (W where the body defines it)
MODULES = {
    "interrupts_at_import": "raise KeyboardInterrupt\n",
    "handler_interrupts": 'def h(cfg, w, *a):\n    raise KeyboardInterrupt\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "actions_empty": 'V = Protocol("v", "s", (), base="eager")\n',
    "actions_junk": 'V = Protocol("v", "s", (1, 2, 3), base="eager")\n',
    "actions_list": 'V = Protocol("v", "s", list(eager.actions), base="eager")\n',
    "actions_str": 'V = Protocol("v", "s", "abc", base="eager")\n',
    "add_bad_after": 'V = eager.variant("v", "s", add=[(ActionSpec("X", "consumer", "self", lambda c,w,i: None, "internal", "x"), "Nope")])\n',
    "add_ok_action": 'def x(cfg, w, c):\n    return None\nV = eager.variant("v", "s", add=[(ActionSpec("X", "consumer", "self", x, "internal", "x", fair="fault", spends="gc_pauses"), "")])\n',
    "bad_actor": 'V = eager.variant("v", "s", add=[(ActionSpec("X", "robot", "self", lambda c,w,i: None, "internal", "x"), "")])\n',
    "bad_actor_unhash": 'V = eager.variant("v", "s", add=[(ActionSpec("X", ["consumer"], "self", lambda c,w,i: None, "internal", "x"), "")])\n',
    "bad_fair": 'V = eager.variant("v", "s", add=[(ActionSpec("X", "consumer", "self", lambda c,w,i: None, "internal", "x", fair="sometimes"), "")])\n',
    "bad_kind": 'V = eager.variant("v", "s", add=[(ActionSpec("X", "consumer", "self", lambda c,w,i: None, "dance", "x"), "")])\n',
    "bad_name_unhash": 'V = eager.variant("v", "s", add=[(ActionSpec(["X"], "consumer", "self", lambda c,w,i: None, "internal", "x"), "")])\n',
    "bad_over": 'V = eager.variant("v", "s", add=[(ActionSpec("X", "consumer", "moon", lambda c,w,i: None, "internal", "x"), "")])\n',
    "bad_parts": 'V = eager.variant("v", "s", add=[(ActionSpec("X", "consumer", "self", lambda c,w,i: None, "internal", "x", reads=frozenset({"moon"})), "")])\n',
    "bad_parts_str": 'V = eager.variant("v", "s", add=[(ActionSpec("X", "consumer", "self", lambda c,w,i: None, "internal", "x", reads="consumer"), "")])\n',
    "base_nonstr": 'V = Protocol("v", "s", eager.actions, base=42)\n',
    "base_unknown": 'V = Protocol("v", "s", eager.actions, base="nosuch")\n',
    "base_variant": 'V = eager.variant("v", "s")\nfrom groupcheck.model.actions import register\nregister(V)\nW = Protocol("w", "s", eager.actions, base="v")\n',
    "choices_mismatch": 'V = Protocol("v", "s", tuple(replace(s, choices=True, plan=True) if s.name=="Fetch" else s for s in eager.actions), base="eager")\n',
    "dup_spec": 'V = Protocol("v", "s", eager.actions + eager.actions[:1], base="eager")\n',
    "factory_args": "def V(x):\n    return eager\n",
    "factory_raises": 'def V():\n    raise ValueError("factory boom")\n',
    "factory_sysexit": "def V():\n    raise SystemExit(4)\n",
    "factory_wrong": 'def V():\n    return "nope"\n',
    "fairorder_junk": 'V = Protocol("v", "s", eager.actions, base="eager", fairness_order=("Nope", 3))\n',
    "getattr_mod": 'def __getattr__(n):\n    raise RuntimeError("gettattr boom")\n',
    "guard_notcallable": 'V = Protocol("v", "s", tuple(replace(s, when=5) if s.name == "Fetch" else s for s in eager.actions), base="eager")\n',
    "guard_raises": 'def g(*a):\n    raise RuntimeError("guard boom")\nV = Protocol("v", "s", tuple(replace(s, when=g) if s.name == "Fetch" else s for s in eager.actions), base="eager")\n',
    "guard_wrongtype": 'def g(*a):\n    return "yes"\nV = Protocol("v", "s", tuple(replace(s, when=g) if s.name == "Fetch" else s for s in eager.actions), base="eager")\n',
    "handler_badconsumers": 'def h(cfg, w, *a):\n    return w._replace(consumers=(1, 2))\nV = eager.variant("v", "s", handlers={"Fetch": h})\n',
    "handler_badlen": 'def h(cfg, w, *a):\n    return w._replace(consumers=w.consumers[:1])\nV = eager.variant("v", "s", handlers={"Fetch": h})\n',
    "handler_badlog": 'def h(cfg, w, *a):\n    return w._replace(log=w.log._replace(**{w.log._fields[0]: "junk"}))\nV = eager.variant("v", "s", handlers={"Fetch": h})\n',
    "handler_badworld": 'def h(cfg, w, *a):\n    return w._replace(consumers=None)\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "handler_generator": 'def h(cfg, w, *a):\n    yield w\nV = eager.variant("v", "s", handlers={"Fetch": h})\n',
    "handler_notcallable": 'V = eager.variant("v", "s", handlers={"Fetch": 42})\n',
    "handler_raises": 'def h(cfg, w, *a):\n    raise ZeroDivisionError("handler boom")\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "handler_recursion": 'def h(cfg, w, *a):\n    return h(cfg, w, *a)\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "handler_sysexit": 'def h(cfg, w, *a):\n    raise SystemExit(5)\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "handler_tuple": 'def h(cfg, w, *a):\n    return (w, w)\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "handler_unhashable": 'def h(cfg, w, *a):\n    return w._replace(sizes=tuple([[1]] * len(w.sizes)))\nV = eager.variant("v", "s", handlers={"Fetch": h})\n',
    "handler_wrongarity": 'def h(cfg):\n    return None\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "handler_wrongtype": 'def h(cfg, w, *a):\n    return 42\nV = eager.variant("v", "s", handlers={"CompleteJoin": h})\n',
    "message_unknown": 'V = Protocol("v", "s", tuple(replace(s, message="Moon") if s.message else s for s in eager.actions), base="eager")\n',
    "mutable_state": 'seen = []\norig = eager.spec("Fetch", "C1").handler\ndef h(cfg, w, *a):\n    seen.append(1)\n    return orig(cfg, w, *a) if len(seen) % 2 else None\nV = eager.variant("v", "s", handlers={"Fetch": h})\n',
    "mutate_builtin": 'import groupcheck.model.actions as A\nA._REGISTRY["eager"] = None\nV = eager.variant("v", "s")\n',
    "name_nonstr": 'V = Protocol(42, "s", eager.actions, base="eager")\n',
    "named_builtin": 'V = eager.variant("eager", "s")\n',
    "named_classic": 'V = eager.variant("classic", "s")\n',
    "named_kip848": 'V = eager.variant("kip848", "s")\n',
    "named_long": 'V = eager.variant("v"*100000, "s")\n',
    "named_seed": 'V = eager.variant("seed", "s")\n',
    "named_unicode": 'V = eager.variant("vé", "s")\n',
    "named_weird": 'V = eager.variant("v/../x", "s")\n',
    "nondeterministic": 'import random\ndef h(cfg, w, *a):\n    return None if random.random() < 0.5 else w\nV = eager.variant("v", "s", handlers={"Fetch": h})\n',
    "notproto": "V = 42\n",
    "notproto_cls": "V = Protocol\n",
    "ok": 'V = eager.variant("v", "s")\n',
    "origin_forged": 'V = Protocol("v", "s", eager.actions, base="eager", origin={"module": "x", "sha256": 3})\n',
    "plan_mismatch": 'V = Protocol("v", "s", tuple(replace(s, plan=not s.plan) for s in eager.actions), base="eager")\n',
    "raise_import": 'raise RuntimeError("boom at import")\n',
    "remove_all": 'V = eager.variant("v", "s", remove=list(eager.names()))\n',
    "request_unknown": 'V = Protocol("v", "s", tuple(replace(s, request="Moon") if s.request else s for s in eager.actions), base="eager")\n',
    "spends_unknown": 'V = Protocol("v", "s", tuple(replace(s, spends="moon") if s.name == "Fetch" else s for s in eager.actions), base="eager")\n',
    "subclass": 'class P(Protocol):\n    pass\nV = P("v", "s", eager.actions, base="eager")\n',
    "summary_nonstr": 'V = Protocol("v", None, eager.actions, base="eager")\n',
    "syntax": "def (\n",
    "sysexit_import": "import sys; sys.exit(3)\n",
    "variant_of_variant": 'V = eager.variant("v", "s")\nW = V.variant("w", "s2")\n',
}


def _forged_traces(trace: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    def edit(f):  # type: ignore[no-untyped-def]
        doc = json.loads(json.dumps(trace))
        f(doc)
        return doc

    return {
        "model-absent": edit(lambda d: d.pop("model")),
        "model-a-string": edit(lambda d: d.__setitem__("model", "x")),
        "model-a-list": edit(lambda d: d.__setitem__("model", [1])),
        "model-null": edit(lambda d: d.__setitem__("model", None)),
        "model-without-sha256": edit(lambda d: d["model"].pop("sha256")),
        "model-sha256-a-number": edit(lambda d: d["model"].__setitem__("sha256", 5)),
        "model-forged-sha256": edit(lambda d: d["model"].__setitem__("sha256", "0" * 64)),
        "model-names-a-built-in": edit(lambda d: d["model"].__setitem__("protocol", "eager")),
        "model-module-a-command": edit(lambda d: d["model"].__setitem__("module", "os; rm -rf /")),
        "model-module-10-MB": edit(lambda d: d["model"].__setitem__("module", "x" * 10_000_000)),
        "model-another-variant": edit(lambda d: d["model"].__setitem__("protocol", "v")),
        "model-extra-key": edit(lambda d: d["model"].__setitem__("extra", {"a": 1})),
    }


def cases(tmp: Path) -> list[tuple[str, list[str]]]:
    """Write every input into ``tmp`` and return (name, command line) for each case."""
    (tmp / "v.toml").write_text(SCENARIO)
    (tmp / "mods").mkdir()
    out: list[tuple[str, list[str]]] = []
    for name, body in sorted(MODULES.items()):
        (tmp / "mods" / f"{name}.py").write_text(HEADER + body)
        obj = "W" if "\nW = " in body else "V"
        out.append((name, ["check", "--model", f"mods/{name}.py:{obj}", "v.toml", "--max-time", "20"]))
    os.mkfifo(tmp / "fifo.py")
    (tmp / "folder.py").mkdir()
    (tmp / "nonutf8.py").write_bytes(b'x = "\xff\xfe"\n')
    with open(tmp / "huge.py", "w") as f:
        f.write('from groupcheck.model.actions import lookup\nV = lookup("eager").variant("v", "s")\n')
        f.write("x = 1\n" * 30_000_000)
    (tmp / "hugemod.py").symlink_to(tmp / "huge.py")
    for name, ref in [
        ("model-dotted-180-MB", "hugemod:V"),
        ("model-a-fifo", "fifo.py:V"), ("model-a-folder", "folder.py:V"), ("model-a-package", "mods:V"),
        ("model-not-utf-8", "nonutf8.py:V"), ("model-180-MB", "huge.py:V"), ("model-dev-zero", "/dev/zero:V"),
        ("model-dev-null-py", "/dev/null.py:V"), ("model-no-colon", "mods/ok.py"), ("model-empty", ""),
        ("model-no-such-module", "no.such.mod:V"), ("model-a-stdlib-module", "os:path"),
        ("model-a-stdlib-function", "os:getcwd"), ("model-relative-import", "..x:V"),
    ]:  # fmt: skip
        out.append((name, ["check", "--model", ref, "v.toml"]))
    out += [
        ("model-twice", ["check", "--model", "mods/ok.py:V", "--model", "mods/ok.py:V", "v.toml"]),
        ("two-variants-one-name", ["check", "--model", "mods/ok.py:V", "--model", "mods/named_weird.py:V",
                                   "v.toml"]),
        ("model-on-spark", ["check", "--engine", "spark", "--model", "mods/ok.py:V", "v.toml"]),
        ("handler-raises-workers-2", ["check", "--workers", "2", "--model", "mods/handler_raises.py:V",
                                      "v.toml"]),
        ("handler-raises-simulate", ["simulate", "--model", "mods/handler_raises.py:V", "v.toml", "--runs",
                                     "20"]),
    ]  # fmt: skip
    # a variant's trace, and forgeries of it
    ref = f"{EXAMPLE / 'majority_join.py'}:MAJORITY_JOIN"
    made = subprocess.run(
        [sys.executable, "-m", "groupcheck", "check", "--model", ref, str(EXAMPLE / "scenarios"), "--out",
         str(tmp / "made")], capture_output=True, text=True, cwd=tmp,
    )  # fmt: skip
    trace_path = tmp / "made" / "majority-join-slow-member" / "trace.json"
    if not trace_path.is_file():
        raise SystemExit(f"the example variant wrote no trace: {made.stderr}")
    trace = json.loads(trace_path.read_text())
    (tmp / "mj.json").write_text(json.dumps(trace))
    changed = (EXAMPLE / "majority_join.py").read_text().replace("once more", "once  more")
    (tmp / "mj_changed.py").write_text(changed)
    (tmp / "mj_copy.py").write_text((EXAMPLE / "majority_join.py").read_text())
    for cmd in ("replay", "show", "render"):
        extra = ["--out", f"r-{cmd}"] if cmd == "render" else []
        out += [
            (f"{cmd}-without-model", [cmd, "mj.json", *extra]),
            (f"{cmd}-another-module", [cmd, "--model", "mods/ok.py:V", "mj.json", *extra]),
            (f"{cmd}-changed-source", [cmd, "--model", "mj_changed.py:MAJORITY_JOIN", "mj.json", *extra]),
            (f"{cmd}-a-copy-elsewhere", [cmd, "--model", "mj_copy.py:MAJORITY_JOIN", "mj.json", *extra]),
        ]
    for name, doc in _forged_traces(trace).items():
        (tmp / f"{name}.json").write_text(json.dumps(doc))
        for cmd in ("replay", "show", "render"):
            extra = ["--out", f"r-{name}-{cmd}"] if cmd == "render" else []
            out.append((f"{cmd}-{name}", [cmd, "--model", ref, f"{name}.json", *extra]))
        out.append((f"replay-{name}-without-model", ["replay", f"{name}.json"]))
    return out


def _digests(tmp: Path) -> dict[str, str]:
    found = {}
    for p in tmp.rglob("*"):
        if (
            p.is_file()
            and not p.is_symlink()
            and p.suffix in (".py", ".toml", ".json")
            and "r-" not in p.parts[-2]
        ):
            if p.stat().st_size < 50_000_000:
                found[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds a case may take (a hang past it)"
    )
    args = parser.parse_args(argv)
    counts: Counter[str] = Counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with tempfile.TemporaryDirectory(prefix="groupcheck-adversarial-") as name:
        tmp = Path(name)
        todo = cases(tmp)
        for case, argv_ in todo:
            before = _digests(tmp)
            try:
                done = subprocess.run(
                    [sys.executable, "-m", "groupcheck", *argv_], capture_output=True, text=True, cwd=tmp,
                    env=env, stdin=subprocess.DEVNULL, timeout=args.timeout,
                )  # fmt: skip
                err = done.stderr.strip()
                lines = [ln for ln in err.splitlines() if ln.strip()]
                if "Traceback" in err:
                    status = "traceback"
                elif done.returncode == 2 and len(lines) == 1 and lines[0].startswith("groupcheck: "):
                    status = "refused cleanly"
                elif done.returncode in (0, 1):
                    status = "accepted"
                else:
                    status = "other"
            except subprocess.TimeoutExpired:
                status, err = "hang", ""
            after = _digests(tmp)
            if any(after.get(k) != v for k, v in before.items()):
                status = "data lost"
            counts[status] += 1
            last = err.splitlines()[-1][:140] if err else ""
            print(f"{status:<16} {case:<44} {last}", flush=True)
    bad = sum(counts[s] for s in ("traceback", "hang", "data lost", "other"))
    print(
        f"tried {sum(counts.values())}, refused cleanly {counts['refused cleanly']}, accepted "
        f"{counts['accepted']}, tracebacks {counts['traceback']}, hangs {counts['hang']}, data lost "
        f"{counts['data lost']}, other {counts['other']}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
