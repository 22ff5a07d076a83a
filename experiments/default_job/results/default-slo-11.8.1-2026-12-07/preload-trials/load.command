/root/.cache/rocksdb-tuner/db_bench/11.8.1-release/open_loop load --db /tmp/rocksdb-tuner-work-0/rocksdb-tuner-preload-building-tsh_kg_7/db --data 2147483648 --key_size 20 --value_size 400
