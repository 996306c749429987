export {};
//# sourceMappingURL=sharding-context.js.map