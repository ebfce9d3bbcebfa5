"""The threshold sweep (sweep.py, pure: each threshold's kept and leaked over the labelled questions) and its chart
(chart.py)."""
