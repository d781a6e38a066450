"""Training: turning a model and data into fitted parameters.

``svi`` (minibatch Adam on the ELBO, guarded against Cholesky failures),
``early_stopping`` (validation monitor), ``lbfgs`` (full-batch L-BFGS over gpflow
parameters) and the closed-form schemes of the model families.
"""
