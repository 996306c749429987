export {};
//# sourceMappingURL=running-node.js.map