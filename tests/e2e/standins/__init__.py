"""Stand-ins for the upstream classes hpfreeze_export.py reads, with the same names and
attributes, so the exporter is tested without torch or hyper_parallel installed."""
