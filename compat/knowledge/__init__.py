"""What compat knows: the constraint database, the GPU catalog and the
metadata snapshots of tracked releases. Plain data, loaded lazily, no I/O
beyond reading the bundled files (and writing snapshots in `sync`)."""
