"""A run's shards as Ray tasks (`run --ray`): the launcher, each shard on a worker, each call
and answer kept by the driver as it happens, and the reaper of what a cancelled run left."""
