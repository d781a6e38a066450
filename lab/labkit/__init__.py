"""The lab's own library: what the project's studies and page generators share that no user of gpal calls.

gpal's public API is all it uses of gpal (``tests/test_lab_public_api.py``).  Install it beside gpal from a clone,
``pip install -e lab``, to run a study or a page generator.
"""
