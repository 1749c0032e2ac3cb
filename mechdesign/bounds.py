"""``mechdesign.bounds`` is documented API; the module lives in :mod:`mechdesign.theory.bounds`.
This name is the same module object, so attributes and monkeypatching agree."""

import sys

from mechdesign.theory import bounds as _module

sys.modules[__name__] = _module
