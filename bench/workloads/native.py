"""Time mostly in C extensions: zlib and hashlib, called from Python."""
import hashlib
import sys
import zlib


def compress_round(data):
    return zlib.decompress(zlib.compress(data, 6))


def digest_round(data):
    return hashlib.sha256(data).digest() + hashlib.md5(data).digest()


def main(scale=1.0):
    data = bytes(range(256)) * 4096 + b"perfpy" * 10000
    total = 0
    for _ in range(int(100 * scale)):
        total += len(compress_round(data))
        total += len(digest_round(data))
    return total


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
