// thomson scenario plugin — written in this session (physics helper).
