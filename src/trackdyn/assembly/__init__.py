"""SPEC -> MODEL: track geometry, the vehicle model builder, settling and tensioning."""
