"""Timesheets for the care home's staff: shifts as 'HH:MM' start and end times, totals per week, pay."""
