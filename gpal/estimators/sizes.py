"""What a ``NoisyGPClassifier`` fit and its predictions would cost, refused before any work when too much.

The estimates and limits are `gpal.training.budget`'s; this module says what a fit of the
noisy-input sparse GP holds in memory and computes per step.
"""

from __future__ import annotations

from typing import Any

from gpal.estimators.params import input_noise_class, input_prior_used

__all__ = ["TYPICAL_STOP_EPOCHS", "TYPICAL_TREND_STOP_EPOCHS", "check_fit_sizes", "check_prediction_memory", "step_flops",
           "step_seconds"]

#: The epochs a fit that stops once its bound stops improving (``tol``) typically runs, about the median: the default
#: fit of the 10-feature, 2000-row task of ``benchmarks/heteroscedastic.py`` stopped after 43-49 over three seeds, and
#: on the catalogs' checks after 18-55, median 31 (the study estimator_default).  The warning before a long fit
#: prices these, not the cap ``epochs``, which such a fit rarely reaches.
TYPICAL_STOP_EPOCHS = 40
#: The same for a model with latent inputs, whose stop reads its bound's trend (`gpal.estimators.fit_plan.BoundStop`):
#: NIMGP with the population prior stopped after 119-140 epochs on that task and after 149-334 on the catalogs'
#: checks, median 210 over both (the study estimator_default; docs/methods.md, "Training length").
TYPICAL_TREND_STOP_EPOCHS = 200


def step_seconds(est: Any, n_rows: int, n_features: int, n_classes: int) -> float:
    """The expected seconds of one optimiser step of ``est`` on ``n_rows`` rows: `gpal.training.budget`'s fixed cost,
    its cost per row of the step, and the step's floating-point work (`step_flops`).

    Returns
    -------
    float
        Seconds.
    """
    from gpal.training.budget import FLOPS, ROW_SECONDS, STEP_SECONDS, rows_per_step

    return (STEP_SECONDS + ROW_SECONDS * rows_per_step(est.batch_size, n_rows)
            + step_flops(est, n_rows, n_features, n_classes) / FLOPS)


def step_flops(est: Any, n_rows: int, n_features: int, n_classes: int) -> float:
    """The floating-point work of one optimiser step of ``est``: the sparse GP's terms per latent function and, for
    NIMGP-NN, its network (forward and backward).

    Returns
    -------
    float
        Floating-point operations.
    """
    from gpal.models.input_noise import AmortizedInputs
    from gpal.training.budget import rows_per_step

    n, d, C = int(n_rows), int(n_features), int(n_classes)
    M, B = min(int(est.num_inducing), n), rows_per_step(est.batch_size, n)
    network = _network_size(est, d, C)[0] if issubclass(input_noise_class(est), AmortizedInputs) else 0
    # floats throughout: a setting may be beyond any machine integer
    return 3.0 * (C * (2.0 * B * M * d + float(B) * M * M + float(M) ** 3 / 3) + 2.0 * B * network)


def _network_size(est: Any, d: int, C: int) -> tuple[int, int]:
    """NIMGP-NN's network weights and its activations per row."""
    widths = [2 * d + C, *(int(h) for h in est.hidden_sizes), 2 * d]
    return sum(a * b for a, b in zip(widths, widths[1:])), sum(widths)


def check_fit_sizes(est: Any, n_rows: int, n_features: int, n_classes: int, n_prior_rows: int | None = None) -> None:
    """Refuse the settings of ``est`` whose training on ``n_rows`` (or predictions) would not fit in this machine,
    and warn of a fit expected to take long; ``n_prior_rows``: the rows the population prior is fitted to."""
    from gpal.models.input_noise import AmortizedInputs
    from gpal.models.input_prior import check_prior_rows
    from gpal.training.budget import FIT_WARN_SECONDS, check_memory, check_time, minibatch_steps, rows_per_step

    n, d, C = int(n_rows), int(n_features), int(n_classes)
    M, B = min(int(est.num_inducing), n), rows_per_step(est.batch_size, n)
    strategy = input_noise_class(est)
    network = activations = 0
    if issubclass(strategy, AmortizedInputs):
        network, per_row = _network_size(est, d, C)
        activations = B * per_row
    if input_prior_used(est) == "population":
        check_prior_rows(n if n_prior_rows is None else int(n_prior_rows), int(est.prior_components))
    # floats throughout: a setting may be beyond any machine integer
    check_memory(8.0 * (C * M * (6.0 * M + 4 * d + 4 * B) + 8.0 * n * d + 4.0 * network + 4.0 * activations),
                 f"training with num_inducing={est.num_inducing}, batch_size={est.batch_size}"
                 + (f", hidden_sizes={list(est.hidden_sizes)}" if network else "") + f" on {n} rows of {d} features",
                 "lower these settings")
    check_prediction_memory(est.n_samples, int(est.n_samples) if strategy.latent_inputs else 1, C, 1, M, d)
    step = step_seconds(est, n, d, C)
    steps = float(minibatch_steps(est.epochs, n, B))
    what = (f"training for {'at most ' if est.tol is not None else ''}epochs={est.epochs} ({steps:.3g} steps of {B} "
            f"rows) with {M} inducing points (num_inducing={est.num_inducing}, at most the {n} training rows)")
    if est.tol is None:
        check_time(steps * step, what, "lower epochs or num_inducing", warn_seconds=FIT_WARN_SECONDS)
        return
    # the cap is refused as ever; the warning prices the epochs a stopping fit typically runs, not the cap
    check_time(steps * step, what, "lower epochs or num_inducing", warn_seconds=float("inf"))
    epochs = TYPICAL_TREND_STOP_EPOCHS if strategy.latent_inputs else TYPICAL_STOP_EPOCHS
    typical = float(minibatch_steps(min(int(est.epochs), epochs), n, B))
    check_time(typical * step, f"{what}, ending once the bound stops improving (tol; typically after about "
               f"{epochs} epochs)", "lower num_inducing or batch_size", warn_seconds=FIT_WARN_SECONDS)


def check_prediction_memory(n_samples: Any, input_draws: int, num_classes: int, latent_draws: int, M: int, d: int) -> None:
    """Refuse an ``n_samples`` whose draws for one source alone (a prediction chunk's least) exceed the memory."""
    from gpal.models.chunked import chunk_evaluations
    from gpal.training.budget import check_memory

    check_memory(8.0 * 4 * (M + d) * chunk_evaluations(input_draws, num_classes, latent_draws),
                 f"prediction with n_samples={n_samples} (Monte Carlo draws per source)", "lower n_samples")
