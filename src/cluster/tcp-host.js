export {};
//# sourceMappingURL=tcp-host.js.map