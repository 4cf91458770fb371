#!/bin/bash
# qd.sh NAME fifo|drr: the egress of every host NIC of the running cluster NAME, rebuilt as
# the spec's tbf (100 Mbit/s, two-frame bucket, 1 MiB) with, under it, either tbf's own FIFO
# (what `cluster up` builds) or an htb that only schedules: one class per destination host
# (198.18.0.10-41), served round robin a frame at a time, its rates far above the line
# rate so that it never limits (this kernel has no fq_codel, fq, sfq or drr qdisc)
name=$1; mode=$2
for ns in $(ip netns list | awk '{print $1}' | grep "^cm-$name-h[0-9]*$"); do
  tc -n $ns qdisc del dev cm-data root 2>/dev/null
  tc -n $ns qdisc add dev cm-data root handle 1: tbf rate 100Mbit burst 3112 limit 1048576
  if [ "$mode" = drr ]; then
    tc -n $ns qdisc add dev cm-data parent 1:1 handle 10: htb default 99
    tc -n $ns class add dev cm-data parent 10: classid 10:1 htb rate 10Gbit ceil 10Gbit quantum 1514
    tc -n $ns class add dev cm-data parent 10:1 classid 10:99 htb rate 1Gbit ceil 10Gbit quantum 1514
    for i in $(seq 0 31); do
      c=$((100 + i))
      tc -n $ns class add dev cm-data parent 10:1 classid 10:$c htb rate 1Gbit ceil 10Gbit quantum 1514
      tc -n $ns qdisc add dev cm-data parent 10:$c bfifo limit 1048576
      tc -n $ns filter add dev cm-data parent 10: protocol ip prio 1 u32 \
        match ip dst 198.18.0.$((10 + i))/32 flowid 10:$c
    done
  fi
done
