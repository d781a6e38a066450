"""Catalog jobs: the astronomer's verbs on a real catalog.

Train a model on labelled sources, predict class probabilities for a selection,
run the main job (train, hold out, classify the unassociated, report), choose the
sources to label next.  Each job takes what it runs on as a `CatalogSelection`
(`gpal.catalog_jobs.selection`) and an estimator object.
"""
