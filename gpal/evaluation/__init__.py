"""Evaluation: metrics, calibration, baselines, paired comparisons, prior shift, tables, figures, reports."""
