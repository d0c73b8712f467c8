"""The largest values a spec may give: sizes no benchmark needs, refused before a plugin tries them."""

from __future__ import annotations

MAX_REPEATS = 100_000
MAX_USERS = 10**10
#: Users simulated one by one in a cell of ``simulation: per-user`` (the dataset's n, its
#: ``sample``, or the users of a personalized budget). The per-user path perturbs every user, so
#: its time is linear in the users: 10**8 is minutes per cell; 10**10 would be days.
MAX_PER_USER_USERS = 10**8
#: A spec's name is a folder name under the results root (``results/<name>``): one path
#: component, never ``..``, ``/``, a control character or a name longer than file systems allow.
MAX_NAME_LENGTH = 100
