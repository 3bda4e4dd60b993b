// SDK core: see the other files.
