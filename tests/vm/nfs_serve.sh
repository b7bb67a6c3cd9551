#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# nfs_serve.sh EXPORT MOUNTPOINT: in the guest, serves the directory EXPORT
# over NFSv4 on loopback and mounts it at MOUNTPOINT (for nfsslower). The
# kernel's nfsd and nfsv4 modules ride in run-in-vm's initramfs unloaded
# (LAZY_MODULES); the daemons come unpacked from Debian's packages in the
# VM cache (run-in-vm's NFS_PACKAGES). NFSv4 only: no rpcbind is needed.
export=$1 mountpoint=$2
cache=${SONDE_VM_DIR:-$(dirname "$0")/../../build/vm}
nfs=$cache/nfs
for m in $(cat /run/sonde-vm-modules/nfsd.order /run/sonde-vm-modules/nfsv4.order); do
	[ -d /sys/module/$m ] || insmod /run/sonde-vm-modules/$m.ko || exit 1
done
ip link set lo up
mkdir -p "$export" "$mountpoint" /var/lib/nfs || exit 1
mount -t nfsd nfsd /proc/fs/nfsd || exit 1
echo "$export 127.0.0.1(rw,fsid=0,no_root_squash,insecure,no_subtree_check)" > /etc/exports
# the shortest grace period, so that opens soon after the start succeed
echo 10 > /proc/fs/nfsd/nfsv4gracetime
echo 10 > /proc/fs/nfsd/nfsv4leasetime
"$nfs/usr/sbin/exportfs" -ra || exit 1
"$nfs/usr/sbin/rpc.mountd" -N 3 --no-udp || exit 1
"$nfs/usr/sbin/rpc.nfsd" -N 3 --no-udp 1 || exit 1
mount -t nfs4 -o vers=4.2,addr=127.0.0.1,clientaddr=127.0.0.1 127.0.0.1:/ "$mountpoint"
