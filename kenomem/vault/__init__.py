"""An open vault: its settings, index and state kept in step with the files; init, doctor,
reindex and the read-only views.
"""
