"""The consumer-group protocol, as the seeds describe it (see ../shared/PROTOCOL.md and docs/MODEL.md).

One module per actor or concern: :mod:`model.state` (the world as values), :mod:`model.consumer`,
:mod:`model.coordinator`, :mod:`model.network`, :mod:`model.faults`, :mod:`model.assignors`,
:mod:`model.properties`; :mod:`model.group` assembles them into a :class:`checker.Model`;
:mod:`model.scenario` reads scenario files; :mod:`model.explain` turns a counterexample into the plain
trace document that :mod:`traces` renders. This package imports :mod:`checker`, never the reverse.
"""

from model.config import Config, Switches
from model.group import Act, GroupModel
from model.state import World

__all__ = ["Act", "Config", "GroupModel", "Switches", "World"]
