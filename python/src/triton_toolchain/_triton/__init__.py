"""The Triton adapter: how a resolution is handed to each Triton release.

``_apply`` (knobs on 3.4+, the patched lookups every release has; light, on the
activation fast path), ``_legacy`` (environment and module globals on 3.0-3.3),
``_guards`` (the errors Triton's ptxas and driver lookups raise instead of guessing),
``_build`` (the launcher build).
"""
