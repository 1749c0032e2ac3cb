"""``mechdesign.measures`` is documented API; the module lives in :mod:`mechdesign.theory.measures`.
This name is the same module object, so attributes and monkeypatching agree."""

import sys

from mechdesign.theory import measures as _module

sys.modules[__name__] = _module
