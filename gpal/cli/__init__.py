"""The ``gpal`` command: each verb parses its options, calls one library function and prints what it returns.

`gpal.cli.parser` lists the verbs and their options, `gpal.cli.verbs` holds what each verb does and
`gpal.cli.process` runs one command.  The options of a job's settings are generated (`gpal.cli.options`) from what
the library declares: an estimator's parameters (`gpal.estimators.settings.estimator_settings`) and a job's own
settings (``SETTINGS`` of `gpal.catalog_jobs.classify`, `campaign_settings()` of `gpal.catalog_jobs.campaign_settings`), with
choices from the registries, the value's form from the constraints and defaults from the
library (which checks the values); so a setting added there is an option here without an edit.

Exit codes: 0 done; 2 bad input (the message says what and what was expected);
1 the work itself failed (training diverged); 3 an active-learning run waits for
labels; 130 interrupted (rerun the same command to resume).  A ``TypeError`` is not bad
input: the command line hands the library values of the types it declares, so one is a bug
in gpal and ends with its traceback.

The rest of gpal is imported inside the functions, after `main` has taken Ctrl-C over: an interruption while the
catalog and SciPy modules load (seconds on a busy machine) is then a clean stop, not a traceback.
"""

from gpal.cli.parser import build_parser
from gpal.cli.process import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_LABELS_PENDING, main

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_LABELS_PENDING", "build_parser", "main"]
