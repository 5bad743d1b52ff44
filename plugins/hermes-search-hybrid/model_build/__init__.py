"""Build-time code of the plugin (run by ``hatch_build.py``, not installed)."""
