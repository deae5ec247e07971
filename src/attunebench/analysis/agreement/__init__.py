"""How far the tasks can be trusted to order the models: rank agreement between tasks (`ranks`),
split-half reliability (`reliability`) and how well a task tells the models apart
(`discriminability`)."""
