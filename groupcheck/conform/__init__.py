"""Conformance with Kafka's coordinator: replay the model's traces against Kafka's own group coordinator.

Kafka's group coordinator is a deterministic state machine that runs without a broker. ``conformance/`` is
a small Maven project whose Java program drives Kafka's ``GroupCoordinatorShard`` (the GroupMetadataManager
and OffsetMetadataManager of ``org.apache.kafka:kafka-group-coordinator``, the version pinned in
``conformance/pom.xml``) with a mock clock and a mock timer, one step per JSON line. This package

* builds that harness on first use into a cache directory (``mvn -q -o package``, then online when the
  offline build cannot resolve something) and runs it (:class:`Harness`);
* walks the model (random walks from the initial state with a seeded :class:`random.Random` — steps Kafka
  takes inside a request taken at once, the model's choices resolved by Kafka — and the counterexamples of
  the exhaustive search), turns each step into the **coordinator-visible events** it
  implies (:meth:`Replayer.events`) — the requests the coordinator takes, its timeouts (one member's
  session, the join phase) as mock-timer firings, the commit of the leader's assignment write, a failover
  as a fresh coordinator that replays the log the old one wrote;
* compares **every response** the model's coordinator sends with Kafka's (error code, generation, member
  id, leader, the leader's member list with each member's ownership claims, protocol, assignment, and the
  committed offsets a newly assigned member would fetch) and the group's state after the step (Kafka's
  group state, generation, members, leader, stored assignment);
* classifies the first difference of each walk (the comparison of a walk stops there): a kind of
  :data:`KNOWN` — a documented simplification (docs/MODEL.md says what Kafka does, what the model does and
  why no verdict depends on it) or a difference awaiting a model fix (docs/MODEL.md says the fix) — or an
  *unexplained* one, and writes a bundle (:func:`write_bundle`).

Member ids: the model's are small integers renamed onto 1..k after every step
(:mod:`groupcheck.model.shared.symmetry`), so each id is followed through the renamings under a stable label
(``M1``, ``M2``, ...); Kafka makes its own ids (client id + UUID). A label is bound to a Kafka id when the two
sides' responses first give it to a member (or, for a group that starts stable, by the harness's bootstrap),
and every later request carries the bound Kafka id. Kafka 4.x answers a dynamic member's first JoinGroup
MEMBER_ID_REQUIRED (KIP-394); the harness makes that round trip inside the one JoinGroup the model sends.

The package's modules, by concern: :mod:`.harness` (building the harness, its process), :mod:`.replay`
(the replayer: a model step's events, the comparison), :mod:`.divergences` (divergences and the rules that
classify them), :mod:`.walks` (random, counterexample and steered walks; :func:`run`) and :mod:`.report`
(bundles, the summary). Their public names are re-exported here.
"""

from __future__ import annotations

from groupcheck.conform.divergences import (
    KNOWN,
    MODEL_FIX,
    RULES,
    SIMPLIFICATION,
    Case,
    Divergence,
    Kind,
    classify,
    rule,
)
from groupcheck.conform.harness import (
    MAIN_CLASS,
    PROJECT,
    Harness,
    HarnessUnavailable,
    cache_root,
    harness_classpath,
    kafka_version,
    missing_tools,
)
from groupcheck.conform.replay import (
    CLASSIC_NOTE,
    DEFAULT_MAX_STEPS,
    ERRORS,
    PARTITION_TRIGGERS,
    PROTOCOLS,
    Replayer,
    StepRecord,
    WalkResult,
    conformable,
    urgent_pending,
)
from groupcheck.conform.report import ProtocolReport, Report, summary_lines, write_bundle
from groupcheck.conform.walks import (
    STEER_MAX_STATES,
    STEER_TARGETS,
    _refinements,
    counterexample_search,
    random_options,
    replay_walk,
    run,
    steering_search,
    urgent_options,
)

__all__ = [
    "CLASSIC_NOTE",
    "DEFAULT_MAX_STEPS",
    "ERRORS",
    "KNOWN",
    "MAIN_CLASS",
    "MODEL_FIX",
    "PARTITION_TRIGGERS",
    "PROJECT",
    "PROTOCOLS",
    "RULES",
    "SIMPLIFICATION",
    "STEER_MAX_STATES",
    "STEER_TARGETS",
    "Case",
    "Divergence",
    "Harness",
    "HarnessUnavailable",
    "Kind",
    "ProtocolReport",
    "Replayer",
    "Report",
    "StepRecord",
    "WalkResult",
    "_refinements",
    "cache_root",
    "classify",
    "conformable",
    "counterexample_search",
    "harness_classpath",
    "kafka_version",
    "missing_tools",
    "random_options",
    "replay_walk",
    "rule",
    "run",
    "steering_search",
    "summary_lines",
    "urgent_options",
    "urgent_pending",
    "write_bundle",
]
