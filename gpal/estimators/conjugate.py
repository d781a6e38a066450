"""``NoisyGPClassifier(inference="cavi" | "natural_gradient" | "cavi_collapsed")``: the augmented logistic-softmax model's route.

The conjugate schemes (paper 004) are ``LogisticSoftmaxGPClassifier``'s; this module checks that
the estimator's settings allow them, trains that estimator in SVI's units and holds its q(u) as a
``NoisySVGP`` (``ModelSession.of_augmented``), so that prediction, sampling and saving are the
same code as after SVI.
"""

from __future__ import annotations

from typing import Any

from gpal.estimators.base import FitData
from gpal.estimators.logistic_softmax import LogisticSoftmaxGPClassifier
from gpal.estimators.params import input_noise_class, model_spec
from gpal.registry import CONJUGATE_INFERENCE, INPUT_NOISE
from gpal.training.budget import minibatch_steps
from gpal.training.session import ModelSession

__all__ = ["AUGMENTED_OPTIONS", "check_conjugate", "fit_augmented"]

#: Settings of the augmented model that have no SVI counterpart, passed through ``inference_options``.
AUGMENTED_OPTIONS = ("hyper_every", "train_inducing", "nat_delay", "nat_forgetting", "jitter")


def check_conjugate(est: Any, likelihood_name: str | None) -> None:
    """Refuse ``inference_options`` with SVI, and a conjugate scheme with settings it cannot train."""
    options = est.inference_options or {}
    if est.inference == "svi":
        if options:
            raise ValueError(
                f"inference_options {sorted(options)} configure the conjugate schemes {list(CONJUGATE_INFERENCE)}; "
                "SVI is set by batch_size, epochs and learning_rate"
            )
        return
    if likelihood_name != "logistic_softmax":
        raise ValueError(
            f"inference={est.inference!r} is the conjugate scheme of the augmented logistic-softmax model "
            f"and exists only for likelihood='logistic_softmax'; with likelihood={est.likelihood!r} use inference='svi'"
        )
    if not input_noise_class(est).conjugate_inference:
        raise ValueError(
            f"inference={est.inference!r} models exact inputs; use an input_noise of "
            f"{list(INPUT_NOISE.having('conjugate_inference'))}, or inference='svi' for input_noise={est.input_noise!r}"
        )
    if not est.train_inducing:
        raise ValueError(f"train_inducing=False holds SVI's inducing inputs; inference={est.inference!r} takes its own "
                         f"in inference_options (train_inducing, False unless set): leave train_inducing at True")
    if est.share_kernel_and_inducing:
        raise ValueError(f"share_kernel_and_inducing=True shares SVI's kernel and inducing inputs among the latent "
                         f"functions; inference={est.inference!r} builds its own model: leave it at False")
    if est.warm_start:
        raise ValueError(f"warm_start continues an SVI fit; inference={est.inference!r} refits from scratch: set warm_start=False")
    if est.epochs < 1:
        raise ValueError(f"inference={est.inference!r} needs epochs >= 1; got {est.epochs!r}")
    unknown = sorted(set(options) - set(AUGMENTED_OPTIONS))
    if unknown:
        raise ValueError(f"unknown inference_options {unknown}; valid options are {list(AUGMENTED_OPTIONS)}")


def fit_augmented(est: Any, data: FitData) -> Any:
    """CAVI / natural-gradient training of the augmented model on ``data``, ``epochs`` sweeps or passes.

    Returns
    -------
    NoisyGPClassifier
        ``est``, fitted.
    """
    cavi = est.inference != "natural_gradient"  # full-batch sweeps
    inner = LogisticSoftmaxGPClassifier(
        inference=est.inference,
        num_inducing=int(est.num_inducing),
        kernel=est.kernel,
        max_iter=int(est.epochs) if cavi else minibatch_steps(est.epochs, data.X.shape[0], est.batch_size),
        batch_size=None if cavi else int(est.batch_size),
        learning_rate=float(est.learning_rate),
        n_samples=int(est.n_samples),
        standardize=bool(est.standardize),
        scaling=est.scaling,
        random_state=est.random_seed_,
        progress=bool(est.progress),
        **(est.inference_options or {}),
    ).fit(data.X, data.classes[data.y])
    session = ModelSession.of_augmented(inner.model_, inner.classes_, model_spec(est), est.n_samples, data.X.shape[0])
    est._keep(session, inner.n_features_in_, inner.standardizer_, inner.history_, False)
    return est
