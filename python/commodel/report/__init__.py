"""Reports: text tables, prediction summaries and (later) plots.

Only ``commodel.report.plots`` may import matplotlib, and only when a plot is drawn.
"""
