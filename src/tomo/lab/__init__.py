"""tomo lab: measure what a model gets done through tomo, judged by each task's own oracle, never by tomo's claim.

A suite is a directory of tasks (:mod:`tomo.lab.suite`); a variant is a tomo command line (``run --exec-gate``); a run
is one task under one variant on one model, in a fresh copy, recorded in SQLite (:mod:`tomo.lab.records`) with the
oracle's verdict beside tomo's claim, so a false claim is counted, not believed. :mod:`tomo.lab.report` turns the
records into solve rates with intervals and paired A/B tests; ``tomo lab bless`` turns them into the blessed list.
"""
