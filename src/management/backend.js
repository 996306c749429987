export {};
//# sourceMappingURL=backend.js.map