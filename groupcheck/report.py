"""Reports of a check run for other tools: JUnit XML (one test case per scenario) for CI systems."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from groupcheck.runner import CheckOutcome


def _dotted(folder: Path) -> str:
    """A scenario file's folder as a JUnit class name: relative to the working directory when it lies
    inside it."""
    try:
        folder = folder.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        pass
    return ".".join(p for p in folder.parts if p not in ("/", ".", "..")) or "specs"


def _fails(o: CheckOutcome, strict: bool) -> bool:
    return not o.as_expected or (strict and bool(o.vacuous))


def junit_xml(
    outcomes: Sequence[CheckOutcome],
    suite: str = "groupcheck",
    *,
    strict: bool = False,
    errors: Sequence[tuple[str, str]] = (),
) -> str:
    """JUnit XML: a test case per scenario (class name from the scenario file's folder), failing when the
    verdict is not the expected one — the message names the verdict, the violated property (or what
    stopped an incomplete search) and the trace — and, with ``strict``, when the scenario left something
    it asks for unexercised. Every case says the bounds its verdict holds within and its warnings.
    ``errors`` are the scenario files that could not be read, (file, problem): a case in error each. A
    scenario without ``[expect]`` (a question) passes with its answer."""
    failures = [o for o in outcomes if _fails(o, strict)]
    total = sum(o.result.stats.seconds for o in outcomes)
    root = ET.Element(
        "testsuite",
        name=suite,
        tests=str(len(outcomes) + len(errors)),
        failures=str(len(failures)),
        errors=str(len(errors)),
        skipped="0",
        time=f"{total:.3f}",
    )
    for o in outcomes:
        sc, r = o.scenario, o.result
        folder = _dotted(Path(sc.source).parent)
        case = ET.SubElement(
            root, "testcase", classname=f"{suite}.{folder}", name=sc.name, time=f"{r.stats.seconds:.3f}"
        )
        verdict = o.found
        trace = None if o.trace_dir is None else str(o.trace_dir / "trace.json")
        details = [
            f"verdict: {verdict} (expected {o.expected})",
            f"within: {sc.bounds()}",
            f"states: {r.stats.distinct_states}, depth: {r.stats.max_depth}",
        ]
        if o.stopped is not None:
            details.append(f"stopped by {o.stopped}: not exhaustive")
        details += [f"warning: {what}" for what in o.vacuous]
        if trace is not None:
            details.append(f"trace: {trace}")
        if o.timing is not None:
            details.append(f"timing: {o.timing.summary()}")
        details += [n for n in o.notes if n.startswith("timed: ")]
        if not o.as_expected:
            message = f"{verdict}, expected {o.expected}" + (f"; trace: {trace}" if trace else "")
            if o.stopped is not None:
                message += f"; stopped by {o.stopped}"
            failure = ET.SubElement(case, "failure", message=message, type="UnexpectedVerdict")
            failure.text = "\n".join(details)
        elif strict and o.vacuous:
            more = len(o.vacuous) - 1
            message = f"vacuous: {o.vacuous[0]}" + (f" (and {more} more)" if more else "")
            failure = ET.SubElement(case, "failure", message=message, type="Vacuous")
            failure.text = "\n".join(details)
        ET.SubElement(case, "system-out").text = "\n".join(details)
    for source, problem in errors:
        folder = _dotted(Path(source).parent)
        case = ET.SubElement(
            root, "testcase", classname=f"{suite}.{folder}", name=Path(source).name, time="0"
        )
        ET.SubElement(case, "error", message=problem, type="MalformedScenario").text = problem
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
