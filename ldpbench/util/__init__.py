"""Small helpers every stage uses and none owns: did-you-mean suggestions (:mod:`.suggest`),
bounded reads of files a user names (:mod:`.safeio`), portable paths in manifests
(:mod:`.provenance`), polars calls spelt for every polars the floor allows (:mod:`.polars_compat`)."""
