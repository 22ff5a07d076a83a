/root/.cache/rocksdb-tuner/db_bench/11.8.1-release/open_loop load --db /tmp/rw2/rocksdb-tuner-preload-building-nzcwnski/db --data 2147483648 --key_size 20 --value_size 400
