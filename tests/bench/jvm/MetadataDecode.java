// The JVM anchor of the benchmarks: decode every record of metadata log files into Java objects.
//
// Run: java MetadataDecode FILE... (prints "records=N checksum=C": the checksum keeps the JIT from dropping work).
// Per batch: the v2 header, the CRC-32C of its bytes (java.util.zip.CRC32C); per record: the varint framing
// (length, attributes, timestamp and offset deltas, key, value, headers); per value: the metadata frame
// (frame version, api key, version) and the message's fields into objects for TopicRecord (2) and
// PartitionRecord (3, versions 0-2, tagged fields included); other record types keep their value's bytes.
// Compressed batches are counted and skipped (the benchmarks' logs are uncompressed, as the raft writes them).
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.zip.CRC32C;

public final class MetadataDecode {
    record Topic(String name, UUID topicId) {}

    record Partition(int partitionId, UUID topicId, int[] replicas, int[] isr, int[] removing, int[] adding,
                     int leader, byte leaderRecoveryState, int leaderEpoch, int partitionEpoch, UUID[] directories,
                     int[] elr, int[] lastKnownElr) {}

    record Other(int apiKey, int version, byte[] data) {}

    record Rec(long offset, long timestamp, byte[] key, Object value) {}

    static long checksum;
    static long records;

    public static void main(String[] args) throws IOException {
        for (String file : args) {
            try (FileChannel channel = FileChannel.open(Path.of(file), StandardOpenOption.READ)) {
                ByteBuffer buf = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
                buf.order(ByteOrder.BIG_ENDIAN);
                decodeFile(buf);
            }
        }
        System.out.println("records=" + records + " checksum=" + checksum);
    }

    static void decodeFile(ByteBuffer buf) {
        int position = 0;
        while (position + 61 <= buf.limit()) {
            long baseOffset = buf.getLong(position);
            int length = buf.getInt(position + 8);
            int end = position + 12 + length;
            if (length < 49 || end > buf.limit()) {
                break;
            }
            decodeBatch(buf, position, end, baseOffset);
            position = end;
        }
    }

    static void decodeBatch(ByteBuffer buf, int position, int end, long baseOffset) {
        long storedCrc = buf.getInt(position + 17) & 0xffffffffL;
        CRC32C crc = new CRC32C();
        crc.update(buf.duplicate().position(position + 21).limit(end));
        if (crc.getValue() != storedCrc) {
            throw new IllegalStateException("corrupt batch at " + position);
        }
        short attributes = buf.getShort(position + 21);
        long baseTimestamp = buf.getLong(position + 27);
        int count = buf.getInt(position + 57);
        if ((attributes & 7) != 0) {
            checksum += count;  // compressed: not decoded here
            return;
        }
        List<Rec> batch = new ArrayList<>(count);
        ByteBuffer in = buf.duplicate().position(position + 61).limit(end);
        boolean control = (attributes & 32) != 0;
        for (int i = 0; i < count; i++) {
            batch.add(decodeRecord(in, baseOffset, baseTimestamp, control));
        }
        records += batch.size();
        checksum += batch.get(batch.size() - 1).offset();
    }

    static Rec decodeRecord(ByteBuffer in, long baseOffset, long baseTimestamp, boolean control) {
        int length = readVarint(in);
        int start = in.position();
        in.get();  // attributes
        long timestamp = baseTimestamp + readVarlong(in);
        long offset = baseOffset + readVarint(in);
        byte[] key = bytes(in, readVarint(in));
        int valueLength = readVarint(in);
        int valueEnd = in.position() + valueLength;
        Object value = control || valueLength < 0 ? bytes(in, valueLength) : decodeValue(in, valueEnd);
        in.position(valueEnd);
        int headers = readVarint(in);
        for (int h = 0; h < headers; h++) {
            bytes(in, readVarint(in));
            bytes(in, readVarint(in));
        }
        if (in.position() != start + length) {
            throw new IllegalStateException("record length mismatch at offset " + offset);
        }
        return new Rec(offset, timestamp, key, value);
    }

    static Object decodeValue(ByteBuffer in, int end) {
        readUnsignedVarint(in);  // frame version
        int apiKey = readUnsignedVarint(in);
        int version = readUnsignedVarint(in);
        if (apiKey == 2) {
            Topic t = new Topic(compactString(in), uuid(in));
            skipTags(in);
            checksum += t.name().length();
            return t;
        }
        if (apiKey == 3) {
            Partition p = partition(in, version);
            checksum += p.leader() + p.replicas().length;
            return p;
        }
        return new Other(apiKey, version, bytes(in, end - in.position()));
    }

    static Partition partition(ByteBuffer in, int version) {
        int partitionId = in.getInt();
        UUID topicId = uuid(in);
        int[] replicas = int32s(in);
        int[] isr = int32s(in);
        int[] removing = int32s(in);
        int[] adding = int32s(in);
        int leader = in.getInt();
        int leaderEpoch = in.getInt();
        int partitionEpoch = in.getInt();
        UUID[] directories = new UUID[0];
        if (version >= 1) {
            directories = new UUID[readUnsignedVarint(in) - 1];
            for (int i = 0; i < directories.length; i++) {
                directories[i] = uuid(in);
            }
        }
        byte recovery = 0;
        int[] elr = null;
        int[] lastKnownElr = null;
        int tags = readUnsignedVarint(in);
        for (int t = 0; t < tags; t++) {
            int tag = readUnsignedVarint(in);
            int size = readUnsignedVarint(in);
            int tagEnd = in.position() + size;
            if (tag == 0) {
                recovery = in.get();
            } else if (tag == 1 && version >= 2) {
                elr = int32s(in);
            } else if (tag == 2 && version >= 2) {
                lastKnownElr = int32s(in);
            }
            in.position(tagEnd);
        }
        return new Partition(partitionId, topicId, replicas, isr, removing, adding, leader, recovery, leaderEpoch,
                             partitionEpoch, directories, elr, lastKnownElr);
    }

    static int[] int32s(ByteBuffer in) {
        int n = readUnsignedVarint(in) - 1;
        if (n < 0) {
            return null;
        }
        int[] values = new int[n];
        for (int i = 0; i < n; i++) {
            values[i] = in.getInt();
        }
        return values;
    }

    static UUID uuid(ByteBuffer in) {
        return new UUID(in.getLong(), in.getLong());
    }

    static String compactString(ByteBuffer in) {
        int n = readUnsignedVarint(in) - 1;
        if (n < 0) {
            return null;
        }
        byte[] raw = new byte[n];
        in.get(raw);
        return new String(raw, java.nio.charset.StandardCharsets.UTF_8);
    }

    static void skipTags(ByteBuffer in) {
        int tags = readUnsignedVarint(in);
        for (int t = 0; t < tags; t++) {
            readUnsignedVarint(in);
            in.position(in.position() + readUnsignedVarint(in));
        }
    }

    static byte[] bytes(ByteBuffer in, int n) {
        if (n < 0) {
            return null;
        }
        byte[] raw = new byte[n];
        in.get(raw);
        return raw;
    }

    static int readUnsignedVarint(ByteBuffer in) {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte b = in.get();
            value |= (b & 0x7f) << shift;
            if (b >= 0) {
                return value;
            }
        }
        throw new IllegalStateException("varint too long");
    }

    static int readVarint(ByteBuffer in) {
        int raw = readUnsignedVarint(in);
        return (raw >>> 1) ^ -(raw & 1);
    }

    static long readVarlong(ByteBuffer in) {
        long value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            byte b = in.get();
            value |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return (value >>> 1) ^ -(value & 1);
            }
        }
        throw new IllegalStateException("varlong too long");
    }
}
