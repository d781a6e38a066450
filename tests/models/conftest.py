"""The tests here import gpflow themselves, before gpal.models has turned check_shapes' docstring rewriting off
(gpal/models/__init__.py): turned off here first, as pytest loads this file before the directory's test modules.
Otherwise each GPflow docstring is parsed at import, about 2 s of a test process.  (check_shapes imports
TensorFlow, which these tests need anyway; a root conftest doing this would load it for every test run.)"""

import check_shapes

check_shapes.set_rewrite_docstrings(None)
