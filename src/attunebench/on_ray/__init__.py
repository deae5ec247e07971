"""A run's shards as Ray tasks (`run --ray`): the launcher (`launch`), each shard on a worker
(`shard`), each call and answer sent to the driver as it happens (`inbox`) and kept there
(`book`), the progress bars fed from the workers (`progress`), and the reaper that stops what a
cancelled run left behind (`reaper`)."""
