"""Where agents live: the hook command agents run on their events, and its install."""
