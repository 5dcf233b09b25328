"""The consumer-group protocol, as the seeds describe it (see ../shared/PROTOCOL.md and docs/MODEL.md).

One module per actor or concern: :mod:`groupcheck.model.shared.state` (the world as values),
:mod:`groupcheck.model.protocols.seed.client`, :mod:`groupcheck.model.protocols.seed.coordinator`,
:mod:`groupcheck.model.shared.network`, :mod:`groupcheck.model.shared.faults`,
:mod:`groupcheck.model.assignors`, :mod:`groupcheck.model.shared.properties`; :mod:`groupcheck.model.group`
assembles them into a :class:`checker.Model`; :mod:`groupcheck.model.scenario` reads scenario files;
:mod:`groupcheck.model.explain` turns a counterexample into the plain trace document that :mod:`traces`
renders. This package imports :mod:`checker`, never the reverse.
"""

from groupcheck.model.group import Act, GroupModel
from groupcheck.model.shared.config import Config, Switches
from groupcheck.model.shared.state import World

__all__ = ["Act", "Config", "GroupModel", "Switches", "World"]
