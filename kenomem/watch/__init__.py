"""The watcher: file system events turned into index updates."""
