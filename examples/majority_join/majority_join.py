"""A protocol variant a user might want to check: the coordinator completes the join as soon as a strict
majority of the group's members have rejoined, instead of waiting for every member (or the rebalance
timeout). The members that have not rejoined are dropped from the new generation, as the rebalance
timeout drops them in Kafka.

Check it with the ordinary scenario files, naming ``protocol = "majority-join"``:

    groupcheck check --model examples/majority_join/majority_join.py:MAJORITY_JOIN \\
        examples/majority_join/scenarios/

The variant is one replaced handler over Kafka's eager JoinGroup + SyncGroup protocol; everything else
(the consumer, the faults, the properties, liveness, the trace viewer) is groupcheck's.
"""

from __future__ import annotations

from groupcheck.model.actions import lookup
from groupcheck.model.protocols.classic import coordinator as eager
from groupcheck.model.protocols.seed import coordinator
from groupcheck.model.shared.state import PREPARE


def majority_complete_join(cfg, w, b, plan=None):  # type: ignore[no-untyped-def]
    """CompleteJoin once more than half of the known members have rejoined: the others are dropped from
    the group first, then the join completes as the eager coordinator completes it."""
    br = coordinator.active_broker(w, b)
    if br is None or br.role != PREPARE:
        return None
    known = coordinator.member_ids(br)
    rejoined = {m for _, m in br.joined if m is not None} & set(known)
    if known and 2 * len(rejoined) > len(known) and len(rejoined) < len(known):
        members = tuple((m, c) for m, c in br.members if m in rejoined)
        w = coordinator.set_broker(w, b, br._replace(members=members))
    return eager.complete_join(cfg, w, b, plan)


MAJORITY_JOIN = lookup("eager").variant(
    "majority-join",
    "eager JoinGroup + SyncGroup, completing the join once a majority of the members rejoined",
    handlers={"CompleteJoin": majority_complete_join},
)
