"""Reports: text tables, prediction summaries, model comparisons and plots; the text of
``commodel advise`` (``advise_tables``) and of the measurements without a fit
(``measure_tables``).

Only the plotting modules (``gantt``, ``measure_plots``, ``validate_plots``) import
matplotlib, and only when a plot is drawn.
"""
