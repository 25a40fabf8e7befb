/** ./targets.js: each mutated file with the test files its mutants run against. */
export declare const TARGETS: Record<string, string[]>;
