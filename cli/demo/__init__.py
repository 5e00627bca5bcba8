"""kraftsman-demo: the main job, a local quorum on embedded defaults."""
