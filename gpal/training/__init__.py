"""Training: turning a model and data into fitted parameters.

``svi`` (minibatch Adam on the ELBO, guarded against Cholesky failures), ``session`` (a
model kept with its trainer and compiled functions across warm refits), ``batched`` (many
fits of one model signature as one), ``early_stopping`` (validation monitor), ``lbfgs``
(full-batch L-BFGS over gpflow parameters), and one module per closed-form scheme of the
model families: ``collapsed`` (Dirichlet GP), ``cavi`` (augmented logistic-softmax),
``bounds`` (logistic bounds).  Models never import from here.
"""
